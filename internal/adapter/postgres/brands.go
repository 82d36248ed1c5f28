package postgres

import (
	"context"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/merchant"
)

// brandColumns read a brand from merchant_brands b (LEFT JOINed: every
// column may be NULL), never the logo's bytes.
const brandColumns = `b.display_name, b.accent, b.logo_type, b.logo_sha256`

type brandRow struct {
	DisplayName sql.NullString `db:"display_name"`
	Accent      sql.NullString `db:"accent"`
	LogoType    sql.NullString `db:"logo_type"`
	LogoSHA256  []byte         `db:"logo_sha256"`
}

func (r brandRow) domain() merchant.Brand {
	b := merchant.Brand{DisplayName: r.DisplayName.String, Accent: r.Accent.String, LogoType: r.LogoType.String}
	if len(r.LogoSHA256) > 0 {
		b.LogoVersion = hex.EncodeToString(r.LogoSHA256)
	}
	return b
}

const selectBrand = `
SELECT ` + brandColumns + `
FROM merchants m LEFT JOIN merchant_brands b ON b.merchant_id = m.id
WHERE m.id = $1`

// Brand returns the merchant's brand, the zero Brand when it has none.
func (q queries) Brand(ctx context.Context, merchantID string) (merchant.Brand, error) {
	var r brandRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectBrand, merchantID); err != nil {
		return merchant.Brand{}, translate(err)
	}
	return r.domain(), nil
}

const selectLogo = `
SELECT logo_type, logo, logo_sha256 FROM merchant_brands
WHERE merchant_id = $1 AND logo IS NOT NULL`

// Logo returns the merchant's logo; errs.NotFound when it has none.
func (q queries) Logo(ctx context.Context, merchantID string) (merchant.Logo, error) {
	var r struct {
		Type   string `db:"logo_type"`
		Data   []byte `db:"logo"`
		SHA256 []byte `db:"logo_sha256"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, selectLogo, merchantID); err != nil {
		return merchant.Logo{}, translate(err)
	}
	return merchant.Logo{Type: r.Type, Data: r.Data, SHA256: r.SHA256}, nil
}

// upsertBrand writes the name and accent; $4 says whether the logo
// columns take $5..$7 or keep their values.
const upsertBrand = `
INSERT INTO merchant_brands (merchant_id, display_name, accent, logo_type, logo, logo_sha256, updated_at)
VALUES ($1, NULLIF($2, ''), NULLIF($3, ''), NULLIF($5, ''), $6, $7, $8)
ON CONFLICT (merchant_id) DO UPDATE SET
  display_name = EXCLUDED.display_name,
  accent = EXCLUDED.accent,
  logo_type = CASE WHEN $4 THEN EXCLUDED.logo_type ELSE merchant_brands.logo_type END,
  logo = CASE WHEN $4 THEN EXCLUDED.logo ELSE merchant_brands.logo END,
  logo_sha256 = CASE WHEN $4 THEN EXCLUDED.logo_sha256 ELSE merchant_brands.logo_sha256 END,
  updated_at = EXCLUDED.updated_at`

// SetBrand stores the display name and accent and, when logo is not nil,
// replaces the logo (a zero Logo removes it).
func (q queries) SetBrand(ctx context.Context, merchantID, displayName, accent string, logo *merchant.Logo, at time.Time) error {
	var l merchant.Logo
	if logo != nil {
		l = *logo
	}
	var data, sum []byte
	if len(l.Data) > 0 {
		data, sum = l.Data, l.SHA256
	}
	_, err := q.ex.ExecContext(ctx, upsertBrand, merchantID, displayName, accent, logo != nil, l.Type, data, sum, at)
	return translate(err)
}
