-- +goose Up
-- A funding source's history of corrections by notifications of change:
-- the values each one replaced, the old account number sealed as it was
-- (with the source id as associated data). original_trace is the entry the
-- bank corrected; one change per entry and code, so importing a file again
-- applies nothing. Sandbox simulations have none.
CREATE TABLE funding_source_changes (
    merchant_id         text NOT NULL,
    environment         text NOT NULL,
    id                  text NOT NULL,
    funding_source_id   text NOT NULL,
    change_code         text NOT NULL CHECK (change_code IN ('C01', 'C02', 'C03', 'C05', 'C06', 'C07')),
    original_trace      text,
    old_routing_number  text NOT NULL,
    old_bank_name       text,
    old_last_four       text NOT NULL,
    old_account_type    text NOT NULL,
    old_account_key_id  text NOT NULL,
    old_account_ciphertext bytea NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, funding_source_id)
        REFERENCES funding_sources (merchant_id, environment, id) ON DELETE RESTRICT
);
CREATE UNIQUE INDEX funding_source_changes_once ON funding_source_changes (original_trace, change_code)
    WHERE original_trace IS NOT NULL;
CREATE INDEX funding_source_changes_of_source ON funding_source_changes (merchant_id, environment, funding_source_id, created_at);

-- +goose Down
DROP TABLE funding_source_changes;
