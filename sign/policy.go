package sign

import (
	"fmt"
	"strings"
)

// Policy says what a host does with plugin signatures.
type Policy uint8

// Policies. The zero value is PolicyDefault.
const (
	// PolicyDefault is PolicyRequire when a trust store is configured and
	// PolicyOff when none is; see [Policy.Resolve].
	PolicyDefault Policy = iota
	// PolicyOff does not check signatures.
	PolicyOff
	// PolicyWarn checks signatures, logs failures and loads the plugin
	// anyway.
	PolicyWarn
	// PolicyRequire refuses a plugin whose signature does not verify,
	// including one that is not signed.
	PolicyRequire
)

var policyNames = [...]string{
	PolicyDefault: "default",
	PolicyOff:     "off",
	PolicyWarn:    "warn",
	PolicyRequire: "require",
}

// ParsePolicy returns the policy named s: "off", "warn" or "require", or
// PolicyDefault for "" or "default". Case does not matter. The error for
// any other value names it and lists the allowed ones.
func ParsePolicy(s string) (Policy, error) {
	if s == "" {
		return PolicyDefault, nil
	}
	for p, name := range policyNames {
		if strings.EqualFold(s, name) {
			return Policy(p), nil
		}
	}
	return PolicyDefault, fmt.Errorf("unknown signature policy %q (want off, warn, require or default)", s)
}

// String returns the name of p: "default", "off", "warn" or "require", or
// "Policy(N)" for a value that is none of these.
func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// MarshalText returns the name of p, see [Policy.String]. It fails for a
// value that is not one of the policies.
func (p Policy) MarshalText() ([]byte, error) {
	if int(p) >= len(policyNames) {
		return nil, fmt.Errorf("invalid signature policy %d", uint8(p))
	}
	return []byte(policyNames[p]), nil
}

// UnmarshalText sets p to the policy named b, see [ParsePolicy]. On error
// p is unchanged.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Resolve returns the policy in effect: for PolicyDefault, PolicyRequire
// if haveTrustStore and PolicyOff if not; any other policy unchanged.
func (p Policy) Resolve(haveTrustStore bool) Policy {
	if p != PolicyDefault {
		return p
	}
	if haveTrustStore {
		return PolicyRequire
	}
	return PolicyOff
}
