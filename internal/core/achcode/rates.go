package achcode

// NACHA watches an originator's debit return rates and opens an inquiry
// above these thresholds (over 60 days): returns for an unauthorized debit,
// administrative returns (the account is closed, missing or malformed) and
// all returns.
var (
	// UnauthorizedCodes are the returns that say the debit was not
	// authorized.
	UnauthorizedCodes = []string{"R05", "R07", "R10", "R11", "R29", "R51"}
	// AdministrativeCodes are the returns that say the account data was
	// wrong.
	AdministrativeCodes = []string{"R02", "R03", "R04"}
)

// Thresholds of the return rates, and their window in days.
const (
	UnauthorizedThreshold   = 0.005
	AdministrativeThreshold = 0.03
	OverallThreshold        = 0.15
	RateWindowDays          = 60
)
