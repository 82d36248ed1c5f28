-- +goose Up
-- The origins a merchant allows the hosted page to redirect customers to,
-- per environment. Stored normalized (scheme://host[:port], lowercase,
-- default port dropped) so equality is a plain comparison.
CREATE TABLE redirect_origins (
    merchant_id  text NOT NULL,
    environment  text NOT NULL,
    origin       text NOT NULL CHECK (origin ~ '^https?://[^/?#@\\]+$' AND length(origin) <= 2048),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, origin),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);

-- +goose Down
DROP TABLE redirect_origins;
