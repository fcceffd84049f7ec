package dynop

// The interfaces through which the host reaches a started plugin's
// operators and passes, for the tests of package dynop_test.
var (
	OperatorsInterfaceForTest = operatorsInterface
	PassesInterfaceForTest    = passesInterface
	SearchedInForTest         = searchedIn
)
