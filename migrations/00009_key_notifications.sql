-- +goose Up
-- Servers cache resolved API keys; every change to a key or an environment
-- (whoever makes it: the service, the CLI, an operator's SQL) notifies them
-- at commit so they drop the cache.
-- +goose StatementBegin
CREATE FUNCTION notify_api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('api_keys_changed', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();
CREATE TRIGGER merchant_environments_changed AFTER UPDATE OR DELETE OR TRUNCATE ON merchant_environments
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();

-- +goose Down
DROP TRIGGER merchant_environments_changed ON merchant_environments;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION notify_api_keys_changed();
