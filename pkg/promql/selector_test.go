package promql

import "testing"

func TestPlainSelector(t *testing.T) {
	for _, ok := range []string{`up`, ` a_b:c `, `x{}`, `x{a="1", b=~"2|3"}`, `{__name__=~"a_(sum|count)", job!="x"}`, "m{a=`b`}"} {
		if err := PlainSelector(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{``, `{}`, `rate(x[1m])`, `x[5m]`, `x offset 1m`, `sum(x)`, `x{a="1"} @ 5`, `1x`, `x{a=1}`, `x{a="1"`, `x + y`} {
		if err := PlainSelector(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
