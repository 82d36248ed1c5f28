package surface

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/payment"
)

// SettlementsCSV answers a day's settlements report as a CSV download, for
// the API and the dashboard alike.
func SettlementsCSV(c *gin.Context, r payment.SettlementReport) error {
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		return fmt.Errorf("write the settlements of %s as CSV: %w", r.Date, err)
	}
	c.Header("Content-Disposition", `attachment; filename="settlements-`+r.Date+`.csv"`)
	c.Data(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	return nil
}
