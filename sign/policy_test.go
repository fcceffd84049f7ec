package sign

import (
	"encoding/json"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{
		"":        PolicyDefault,
		"default": PolicyDefault,
		"off":     PolicyOff,
		"warn":    PolicyWarn,
		"require": PolicyRequire,
		"Require": PolicyRequire,
		"OFF":     PolicyOff,
	} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"strict", "on", "required", " warn", "0"} {
		_, err := ParsePolicy(in)
		checkErr(t, err, nil, `unknown signature policy "`+in+`"`, "want off, warn, require or default")
	}
}

func TestPolicyText(t *testing.T) {
	for p, want := range map[Policy]string{
		PolicyDefault: "default",
		PolicyOff:     "off",
		PolicyWarn:    "warn",
		PolicyRequire: "require",
		Policy(9):     "Policy(9)",
	} {
		if got := p.String(); got != want {
			t.Errorf("Policy(%d).String() = %q, want %q", uint8(p), got, want)
		}
	}

	type config struct{ Signatures Policy }
	for _, p := range []Policy{PolicyDefault, PolicyOff, PolicyWarn, PolicyRequire} {
		b, err := json.Marshal(config{p})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"Signatures":"` + p.String() + `"}`; string(b) != want {
			t.Errorf("json.Marshal = %s, want %s", b, want)
		}
		var c config
		if err := json.Unmarshal(b, &c); err != nil || c.Signatures != p {
			t.Errorf("JSON round trip of %v gave %v, %v", p, c.Signatures, err)
		}
	}

	_, err := Policy(9).MarshalText()
	checkErr(t, err, nil, "invalid signature policy 9")

	p := PolicyWarn
	err = p.UnmarshalText([]byte("sometimes"))
	checkErr(t, err, nil, `"sometimes"`)
	if p != PolicyWarn {
		t.Errorf("failed UnmarshalText changed the policy to %v", p)
	}
}

func TestPolicyResolve(t *testing.T) {
	for _, tc := range []struct {
		p         Policy
		haveStore bool
		want      Policy
	}{
		{PolicyDefault, true, PolicyRequire},
		{PolicyDefault, false, PolicyOff},
		{PolicyOff, true, PolicyOff},
		{PolicyOff, false, PolicyOff},
		{PolicyWarn, true, PolicyWarn},
		{PolicyWarn, false, PolicyWarn},
		{PolicyRequire, true, PolicyRequire},
		{PolicyRequire, false, PolicyRequire},
	} {
		if got := tc.p.Resolve(tc.haveStore); got != tc.want {
			t.Errorf("%v.Resolve(%v) = %v, want %v", tc.p, tc.haveStore, got, tc.want)
		}
	}
}
