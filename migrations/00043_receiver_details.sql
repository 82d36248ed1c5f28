-- +goose Up
-- Who holds a funding source's account, and what its ACH entries say
-- about the receiver.
--
-- account_holder_type decides the SEC code (individual: WEB debits and
-- PPD credits; company: CCD). Existing sources take the default a new
-- one gets: company when the customer has a business_name.
--
-- individual_id is the Individual Identification Number every entry of
-- the source carries: the last 15 characters of the source's random id,
-- upper-cased, so it holds no account data and stays the same on every
-- entry (retries and reversals included); a C09 notification of change
-- replaces it. receiver_name is a C04's corrected name (NULL: the
-- customer's name); addenda_refused_at is when a C13 said the receiving
-- bank cannot read the source's addenda (NULL: addenda go).
--
-- Binaries that predate these columns insert sources without them: a
-- trigger fills the two that cannot be NULL, the same way, so the
-- columns stay expand-only.
ALTER TABLE funding_sources
    ADD COLUMN account_holder_type text CHECK (account_holder_type IN ('individual', 'company')),
    ADD COLUMN individual_id text CHECK (length(individual_id) BETWEEN 1 AND 15),
    ADD COLUMN receiver_name text CHECK (length(receiver_name) BETWEEN 1 AND 22),
    ADD COLUMN addenda_refused_at timestamptz;

UPDATE funding_sources f SET
    account_holder_type = CASE WHEN EXISTS (SELECT 1 FROM customers c
        WHERE c.merchant_id = f.merchant_id AND c.environment = f.environment AND c.id = f.customer_id
          AND c.business_name <> '') THEN 'company' ELSE 'individual' END,
    individual_id = upper(right(f.id, 15));

-- +goose StatementBegin
CREATE FUNCTION funding_sources_receiver_defaults() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.account_holder_type IS NULL THEN
        NEW.account_holder_type := CASE WHEN EXISTS (SELECT 1 FROM customers c
            WHERE c.merchant_id = NEW.merchant_id AND c.environment = NEW.environment AND c.id = NEW.customer_id
              AND c.business_name <> '') THEN 'company' ELSE 'individual' END;
    END IF;
    IF NEW.individual_id IS NULL THEN
        NEW.individual_id := upper(right(NEW.id, 15));
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER funding_sources_receiver_defaults BEFORE INSERT ON funding_sources
    FOR EACH ROW WHEN (NEW.account_holder_type IS NULL OR NEW.individual_id IS NULL)
    EXECUTE FUNCTION funding_sources_receiver_defaults();

ALTER TABLE funding_sources
    ALTER COLUMN account_holder_type SET NOT NULL,
    ALTER COLUMN individual_id SET NOT NULL;

-- A source's history keeps what C04 and C09 replace; C13 replaces
-- nothing (the change's time is when the addenda stopped).
ALTER TABLE funding_source_changes
    DROP CONSTRAINT funding_source_changes_change_code_check,
    ADD CONSTRAINT funding_source_changes_change_code_check
        CHECK (change_code IN ('C01', 'C02', 'C03', 'C04', 'C05', 'C06', 'C07', 'C09', 'C13')),
    ADD COLUMN old_receiver_name text,
    ADD COLUMN old_individual_id text;

-- A payment's company entry description, when the merchant named one
-- (NULL: PURCHASE for an individual's WEB debit, PAYMENT otherwise).
ALTER TABLE payments
    ADD COLUMN entry_description text CHECK (entry_description ~ '^[A-Z0-9 ]{1,10}$');

-- What an entry says about its receiver, decided at assignment like its
-- class so a rebuilt file gives the same bytes: the name and
-- Individual Identification Number, and the text of its 05 addenda
-- record (NULL: none). Entries assigned before these columns are built
-- as they were.
ALTER TABLE ach_entries
    ADD COLUMN receiver_name text CHECK (length(receiver_name) <= 22),
    ADD COLUMN individual_id text CHECK (length(individual_id) <= 15),
    ADD COLUMN addenda text CHECK (length(addenda) BETWEEN 1 AND 80);

-- +goose Down
ALTER TABLE ach_entries DROP COLUMN receiver_name, DROP COLUMN individual_id, DROP COLUMN addenda;
ALTER TABLE payments DROP COLUMN entry_description;
ALTER TABLE funding_source_changes
    DROP COLUMN old_receiver_name, DROP COLUMN old_individual_id,
    DROP CONSTRAINT funding_source_changes_change_code_check,
    ADD CONSTRAINT funding_source_changes_change_code_check
        CHECK (change_code IN ('C01', 'C02', 'C03', 'C05', 'C06', 'C07'));
DROP TRIGGER funding_sources_receiver_defaults ON funding_sources;
DROP FUNCTION funding_sources_receiver_defaults();
ALTER TABLE funding_sources
    DROP COLUMN account_holder_type, DROP COLUMN individual_id,
    DROP COLUMN receiver_name, DROP COLUMN addenda_refused_at;
