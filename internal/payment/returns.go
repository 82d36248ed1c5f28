package payment

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

// sandboxReturnsOnce are magic amounts whose first presentment comes back
// with the code and whose re-presentment (POST /v2/payments/{id}/retry)
// settles: the insufficient funds a retry on a later day finds covered.
var sandboxReturnsOnce = map[int64]string{
	1391: "R01",
}

// SandboxReturnCode is the return code a sandbox payment of cents ends
// with, or "" when it succeeds; retry says the payment presents an
// earlier debit again.
func SandboxReturnCode(cents int64, retry bool) string {
	if code, ok := sandboxReturnsOnce[cents]; ok {
		if retry {
			return ""
		}
		return code
	}
	return sandboxReturns[cents]
}
