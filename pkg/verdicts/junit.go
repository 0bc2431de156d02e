package verdicts

import (
	"bytes"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// JUnit renders gate results as JUnit XML: one suite "density gates", one
// test case per gate (classname the test name, name the key), the reason
// as the failure message; no timestamps or durations.
func JUnit(rs []GateResult, testName string) ([]byte, error) {
	suite := junit.Testsuite{Name: "density gates"}
	for _, r := range rs {
		tc := junit.Testcase{Name: r.Gate.Key, Classname: testName}
		if r.Verdict != Pass {
			tc.Failure = &junit.Result{Message: r.Reason}
		}
		suite.AddTestcase(tc)
	}
	var all junit.Testsuites
	all.AddSuite(suite)
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	if err := all.WriteXML(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
