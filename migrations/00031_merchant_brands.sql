-- +goose Up
-- A merchant's branding of the hosted page, shared by both environments:
-- the name customers see, the accent colour of the page's button and focus
-- ring, and a logo the service serves from its own origin. The logo's
-- SHA-256 versions its address, so browsers may cache it for long.
CREATE TABLE merchant_brands (
    merchant_id   text PRIMARY KEY REFERENCES merchants (id),
    display_name  text CHECK (length(display_name) BETWEEN 1 AND 60),
    accent        text CHECK (accent ~ '^#[0-9a-f]{6}$'),
    logo          bytea CHECK (length(logo) BETWEEN 1 AND 204800),
    logo_type     text CHECK (logo_type IN ('image/png', 'image/jpeg')),
    logo_sha256   bytea CHECK (length(logo_sha256) = 32),
    updated_at    timestamptz NOT NULL,
    CHECK ((logo IS NULL) = (logo_type IS NULL) AND (logo IS NULL) = (logo_sha256 IS NULL))
);
-- Servers cache what a hosted-page public key resolves to, its brand
-- included: a change notifies them like the other parts of it.
CREATE TRIGGER merchant_brands_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchant_brands
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();

-- +goose Down
DROP TRIGGER merchant_brands_changed ON merchant_brands;
DROP TABLE merchant_brands;
