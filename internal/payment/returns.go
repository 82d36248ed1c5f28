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

// SandboxReturnCode is the return code a sandbox payment of cents ends
// with, or "" when it succeeds.
func SandboxReturnCode(cents int64) string { return sandboxReturns[cents] }
