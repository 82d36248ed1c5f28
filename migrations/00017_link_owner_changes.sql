-- +goose Up
-- Servers also cache what a hosted-page public key resolves to: the
-- environment (already notified by 00009), the merchant's name and the
-- environment's redirect origins. A change to either notifies them too.
CREATE TRIGGER merchants_changed AFTER UPDATE OR DELETE OR TRUNCATE ON merchants
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();
CREATE TRIGGER redirect_origins_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redirect_origins
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();

-- +goose Down
DROP TRIGGER redirect_origins_changed ON redirect_origins;
DROP TRIGGER merchants_changed ON merchants;
