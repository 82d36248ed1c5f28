-- +goose Up
-- Entries assigned before their class (00018) or their receiver (00043)
-- was stored have NULLs there, and the code filled them in as it read
-- them, rebuilding such an entry as it went then. This writes those
-- values into the rows, so that every entry reads the same way:
--
--   sec_code, entry_description: PPD, described ACCTVERIFY (a
--     micro-deposit) or PAYMENT (a payment); payment_type stays NULL (no
--     such entry was WEB).
--   receiver_name, individual_id: the customer's first and last name,
--     and the last 15 characters of the source's id, each written as
--     names were before they were folded (pg_temp.ach_name_before_fold):
--     every character outside ASCII a space (but for the two whose upper
--     case is ASCII), upper case whatever the collation, NACHA's name
--     characters (A-Z 0-9 space . , - & ' /) kept and other ASCII
--     dropped, trimmed, then cut. The name is the customer's now, the
--     one a rebuild read.
--
-- Safe on a live database and idempotent: it updates only rows still
-- without the values, drops nothing and adds no constraint. Every release
-- since 00043, the previous one included, writes these columns on each
-- entry it assigns (a class always has an SEC code and a description; a
-- receiver's name is never blank, a source's individual_id is NOT NULL),
-- so a previous binary still running during a rolling upgrade adds no
-- row this would have to fill, and the code reads the columns without a
-- default.
--
-- Not filled here: an entry's effective_date (its file's next banking
-- day: the banking calendar is the code's, not the database's), its
-- return_trace and account_fp (nothing kept says what they were), and
-- file_date (the rows without one took their trace numbers from another
-- sequence, so one may share its number with an entry of the same date,
-- which the unique index would refuse): the code still reads those
-- when they are empty.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.ach_name_before_fold(s text, n integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT left(btrim(regexp_replace(upper(regexp_replace(translate(s, 'ıſ', 'IS'),
        '[^\u0001-\u007f]', ' ', 'g') COLLATE "C"), '[^A-Z0-9 .,&''/-]', '', 'g')), n)
$$;
-- +goose StatementEnd

UPDATE ach_entries
SET sec_code = 'PPD',
    entry_description = CASE WHEN kind = 'micro_deposit' THEN 'ACCTVERIFY' ELSE 'PAYMENT' END
WHERE sec_code IS NULL AND entry_description IS NULL AND payment_type IS NULL;

UPDATE ach_entries e
SET receiver_name = pg_temp.ach_name_before_fold(c.first_name || ' ' || c.last_name, 22),
    individual_id = pg_temp.ach_name_before_fold(right(e.funding_source_id, 15), 15)
FROM customers c
WHERE e.receiver_name IS NULL
  AND c.merchant_id = e.merchant_id AND c.environment = e.environment AND c.id = e.customer_id;

DROP FUNCTION pg_temp.ach_name_before_fold(text, integer);

-- +goose Down
-- The values written are the ones the code gave these rows before: there
-- is nothing to undo.
SELECT 1;
