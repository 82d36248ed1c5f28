package payment

// ACH return codes the service names (NACHA). Unknown codes are kept as
// they came, with a generic reason.
var returnReasons = map[string]string{
	"R01": "Insufficient funds",
	"R02": "Account closed",
	"R03": "No account or unable to locate account",
	"R04": "Invalid account number structure",
	"R05": "Unauthorized debit to consumer account",
	"R07": "Authorization revoked by customer",
	"R08": "Payment stopped",
	"R09": "Uncollected funds",
	"R10": "Customer advises originator is not known or not authorized",
	"R16": "Account frozen",
	"R20": "Non-transaction account",
	"R29": "Corporate customer advises not authorized",
}

// ReturnReason is the meaning of an ACH return code.
func ReturnReason(code string) string {
	if r, ok := returnReasons[code]; ok {
		return r
	}
	return "Returned by the receiving bank"
}

// sandboxReturns are the sandbox's magic amounts: a payment of exactly this
// many cents settles as failed with the code.
var sandboxReturns = map[int64]string{
	1301: "R01",
	1302: "R02",
	1303: "R03",
	1304: "R04",
	1316: "R16",
	1329: "R29",
}

// SandboxReturnCode is the return code a sandbox payment of cents ends
// with, or "" when it succeeds.
func SandboxReturnCode(cents int64) string { return sandboxReturns[cents] }
