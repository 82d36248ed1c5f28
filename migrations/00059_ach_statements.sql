-- +goose Up
-- The bank's statements read, by their <Stmt><Id>: a statement read once
-- is a duplicate in any later file, whose lines are not recorded again.
-- Statements read before this table existed are known by their lines
-- (ach_statement_lines.statement_id), which the claim checks too.
CREATE TABLE ach_statements (
    statement_id     text PRIMARY KEY CHECK (statement_id <> ''),
    statement_sha256 text NOT NULL REFERENCES ach_inbound_files (sha256),
    read_at          timestamptz NOT NULL
);
CREATE INDEX ach_statement_lines_statement ON ach_statement_lines (statement_id);

-- +goose Down
DROP INDEX ach_statement_lines_statement;
DROP TABLE ach_statements;
