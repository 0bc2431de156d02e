package promql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// decodeBody runs what Client.do does with a 200 answer: decode, then turn
// status "error" into the API error.
func decodeBody(body string) (*answer, error) {
	a, err := decodeAnswer([]byte(body))
	if err != nil {
		return nil, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error()}
	}
	if a.status == "error" {
		return nil, &v1.Error{Type: v1.ErrorType(a.errorType), Msg: a.errorMsg}
	}
	return a, nil
}

func TestDecodeAnswer(t *testing.T) {
	ls := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	rows := []struct {
		name     string
		body     string
		wantType string
		want     []Series
		wantWarn []string
		wantErr  string // substring; "" means success
	}{
		{name: "matrix", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"w","pod":"p1"},"values":[[1700000000,"1.5"],[1700000010,"2"]]},{"metric":{"pod":"p2"},"values":[[1700000000,"-3e2"]]}]}}`,
			wantType: "matrix", want: []Series{
				{Labels: ls("__name__", "w", "pod", "p1"), Samples: []Sample{{1700000000, 1.5}, {1700000010, 2}}},
				{Labels: ls("pod", "p2"), Samples: []Sample{{1700000000, -300}}}}},
		{name: "matrix non-finite dropped, all-NaN series kept empty", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"s":"1"},"values":[[1,"1"],[2,"NaN"],[3,"+Inf"],[4,"-Inf"],[5,"4"]]},{"metric":{"s":"0"},"values":[[1,"NaN"]]}]}}`,
			wantType: "matrix", want: []Series{{Labels: ls("s", "1"), Samples: []Sample{{1, 1}, {5, 4}}}, {Labels: ls("s", "0")}}},
		{name: "matrix native histograms ignored", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"histograms":[[1,{"count":"1","sum":"1","buckets":[[0,"0","1","1"]]}]]}]}}`,
			wantType: "matrix", want: []Series{{Labels: ls("a", "b")}}},
		{name: "empty matrix", body: `{"status":"success","data":{"resultType":"matrix","result":[]}}`, wantType: "matrix", want: []Series{}},
		{name: "null result", body: `{"status":"success","data":{"resultType":"matrix","result":null}}`, wantType: "matrix", want: []Series{}},
		{name: "vector with NaN, Inf and a histogram", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"a"},"value":[1700000000,"NaN"]},{"metric":{"__name__":"b"},"value":[1700000000,"+Inf"]},{"metric":{"__name__":"c"},"histogram":[1700000000,{"count":"2","sum":"3"}]},{"metric":{"__name__":"d"},"value":[1700000000,"1.5"]}]}}`,
			wantType: "vector", want: []Series{{Labels: ls("__name__", "a")}, {Labels: ls("__name__", "b")}, {Labels: ls("__name__", "c")},
				{Labels: ls("__name__", "d"), Samples: []Sample{{1700000000, 1.5}}}}},
		{name: "vector without metric", body: `{"status":"success","data":{"resultType":"vector","result":[{"value":[5,"1"]}]}}`,
			wantType: "vector", want: []Series{{Labels: map[string]string{}, Samples: []Sample{{5, 1}}}}},
		{name: "scalar", body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000.5,"0.25"]}}`,
			wantType: "scalar", want: []Series{{Labels: map[string]string{}, Samples: []Sample{{1700000000, 0.25}}}}},
		{name: "NaN scalar", body: `{"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}}`,
			wantType: "scalar", want: []Series{{Labels: map[string]string{}}}},
		{name: "fractional and negative timestamps truncate like Time.Unix", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000.999,"1"],[-5.5,"2"],[0.0001,"3"],[12.34567,"4"]]}]}}`,
			wantType: "matrix", want: []Series{{Labels: map[string]string{}, Samples: []Sample{{1700000000, 1}, {-5, 2}, {0, 3}, {12, 4}}}}},
		{name: "keys in any order, result before resultType, white space", body: " \n{ \"data\" : { \"result\" : [ { \"values\" : [ [ 1 , \"2\" ] ] , \"metric\" : { \"a\" : \"b\" } } ] , \"resultType\" : \"matrix\" } ,\t\"status\" : \"success\" }\r\n",
			wantType: "matrix", want: []Series{{Labels: ls("a", "b"), Samples: []Sample{{1, 2}}}}},
		{name: "envelope key in another case", body: `{"Status":"success","data":{"resultType":"vector","result":[]}}`, wantErr: `bad_response: not a Prometheus answer: key "Status", Prometheus writes "status"`},
		{name: "data key in another case", body: `{"status":"success","data":{"ResultType":"vector","result":[]}}`, wantErr: `key "ResultType", Prometheus writes "resultType"`},
		{name: "series key in another case", body: `{"status":"success","data":{"resultType":"vector","result":[{"Metric":{"a":"b"},"value":[1,"2"]}]}}`, wantErr: `key "Metric", Prometheus writes "metric"`},
		{name: "matrix key in another case", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"VALUES":[[1,"2"]]}]}}`, wantErr: `key "VALUES", Prometheus writes "values"`},
		{name: "misspelt keys, no status", body: `{"dAtA":{"resultTYpe":"vector","result":[{}]}}`, wantErr: `bad_response: not a Prometheus answer: key "dAtA", Prometheus writes "data"`},
		{name: "no status", body: `{"data":{"resultType":"vector","result":[]}}`, wantErr: `bad_response: not a Prometheus answer: no "status"`},
		{name: "null status", body: `{"status":null,"data":{"resultType":"vector","result":[]}}`, wantErr: `not a Prometheus answer: no "status"`},
		{name: "other status", body: `{"status":"ok","data":{"resultType":"vector","result":[]}}`, wantErr: `not a Prometheus answer: "status" is "ok"`},
		{name: "success without data", body: `{"status":"success"}`, wantErr: `"status" is "success" but there is no "data"`},
		{name: "success with null data", body: `{"status":"success","data":null}`, wantErr: `there is no "data"`},
		{name: "vector sample without a value", body: `{"status":"success","data":{"resultType":"vector","result":[{}]}}`, wantErr: `not a Prometheus answer: a vector sample without "value"`},
		{name: "vector sample with a null value", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":null}]}}`, wantErr: `without "value"`},
		{name: "syntax error after a misspelt key wins", body: `{"Status":"success",}`, wantErr: "bad_response: invalid character '}'"},
		{name: "escaped label values and unknown fields", body: `{"status":"success","extra":{"x":[1,true,null,"\u00e9"]},"data":{"resultType":"vector","stats":{"a":1},"result":[{"metric":{"path":"C:\\tmp \"q\" \u00e9\n","a\u0062":"x"},"value":[1,"3"]}]}}`,
			wantType: "vector", want: []Series{{Labels: ls("path", "C:\\tmp \"q\" é\n", "ab", "x"), Samples: []Sample{{1, 3}}}}},
		{name: "warnings kept", body: `{"status":"success","warnings":["partial response","x"],"data":{"resultType":"vector","result":[]}}`,
			wantType: "vector", want: []Series{}, wantWarn: []string{"partial response", "x"}},
		{name: "status error in a 200", body: `{"status":"error","errorType":"internal","error":"boom"}`, wantErr: "internal: boom"},
		{name: "empty body", body: ``, wantErr: "bad_response: unexpected end of JSON input"},
		{name: "HTML", body: `<html>Sign in</html>`, wantErr: "bad_response: invalid character '<' looking for beginning of value"},
		{name: "truncated", body: `{"status":"success","data":{"resultType":"vector","result":[`, wantErr: "bad_response: unexpected end of JSON input"},
		{name: "trailing garbage", body: `{"status":"success","data":{"resultType":"vector","result":[]}} x`, wantErr: "bad_response: invalid character 'x' after top-level value"},
		{name: "trailing comma", body: `{"status":"success","data":{"resultType":"vector","result":[],}}`, wantErr: "bad_response: invalid character '}'"},
		{name: "syntax error after a shape error wins", body: `{"status":"success","data":{"resultType":"string","result":[1,"x"]},}`, wantErr: "bad_response: invalid character '}'"},
		{name: "string result", body: `{"status":"success","data":{"resultType":"string","result":[1,"x"]}}`, wantErr: `bad_response: unexpected value type "string"`},
		{name: "unknown result type", body: `{"status":"success","data":{"resultType":"histogramish","result":[]}}`, wantErr: `bad_response: unknown value type "histogramish"`},
		{name: "no result type", body: `{"status":"success","data":{"result":[]}}`, wantErr: `bad_response: unexpected value type "<ValNone>"`},
		{name: "result of wrong shape", body: `{"status":"success","data":{"resultType":"vector","result":{"oops":1}}}`, wantErr: "bad_response"},
		{name: "value not a string", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}}`, wantErr: "bad_response: sample value must be a quoted string"},
		{name: "value not a number", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"abc"]}]}}`, wantErr: `bad_response: strconv.ParseFloat: parsing "abc"`},
		{name: "timestamp with exponent", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1e3,"1"]]}]}}`, wantErr: "bad_response: sample timestamp 1e3"},
		{name: "pair with three elements", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1",2]]}]}}`, wantErr: "bad_response"},
		{name: "label value not a string", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}}`, wantErr: "bad_response"},
		{name: "control character in a string", body: "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"a\":\"x\ty\"},\"value\":[1,\"1\"]}]}}", wantErr: "bad_response: invalid character '\\t' in string literal"},
		{name: "bad escape", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"\q"},"value":[1,"1"]}]}}`, wantErr: "bad_response: invalid character 'q' in string escape code"},
		{name: "leading zero number", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[01,"1"]}]}}`, wantErr: "bad_response: invalid character '1' after array element"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			a, err := decodeBody(r.body)
			if r.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), r.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, r.wantErr)
				}
				var ae *v1.Error
				if !errors.As(err, &ae) {
					t.Errorf("err %T is not a *v1.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.resultType != r.wantType || !reflect.DeepEqual(a.series, r.want) || !reflect.DeepEqual(a.warnings, r.wantWarn) {
				t.Errorf("got %q %+v warnings %q\nwant %q %+v warnings %q", a.resultType, a.series, a.warnings, r.wantType, r.want, r.wantWarn)
			}
			// The same body through the replaced path gives the same answer.
			if ov, ot, oerr := oracleDecode(r.body); oerr != nil || ot != r.wantType || !reflect.DeepEqual(ov, r.want) {
				t.Errorf("v1 oracle: %q %+v %v", ot, ov, oerr)
			}
		})
	}
}

// Every proper prefix of a valid answer is a truncated body: the error must
// be the one Unmarshal gave (the fault tests and notices rely on it).
func TestDecodeAnswerEveryTruncation(t *testing.T) {
	body := `{"status":"success","warnings":["w"],"data":{"resultType":"matrix","result":[{"metric":{"__name__":"a","b":"c\"d"},"values":[[1700000000.5,"1.25"],[1700000010,"NaN"]]}]}}`
	if _, err := decodeBody(body); err != nil {
		t.Fatal(err)
	}
	for n := range len(body) {
		_, err := decodeBody(body[:n])
		_, oerr := oracleUnmarshal(body[:n])
		if err == nil || oerr == nil || err.Error() != oerr.Error() {
			t.Fatalf("prefix %d %q: err %v, v1 %v", n, body[:n], err, oerr)
		}
	}
}

// FuzzDecodeStream checks the decoder against the path it replaced
// (client_golang's v1.API and the old model conversion) on arbitrary
// bodies: whatever the new decoder accepts is valid JSON with only finite
// samples; where both accept, the series are identical; where the body is
// not JSON, the error messages are identical.
func FuzzDecodeStream(f *testing.F) {
	for _, seed := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"prometheus"},"value":[1700000000,"1"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"a"},"value":[1,"NaN"]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"1"],[2,"+Inf"],[3,"-Inf"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1e20,"1"],[-5,"-1e308"]]}]}}`,
		`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"0.25"]}}`,
		`{"status":"success","data":{"resultType":"string","result":[1,"hello"]}}`,
		`{"status":"success","data":{"resultType":"histogramish","result":[]}}`,
		`{"status":"success","data":{"resultType":"vector","result":{"oops":1}}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{"count":"1","sum":"1","buckets":[[0,"0","1","1"]]}]}]},"warnings":["w"]}`,
		`{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}`,
		`{"status":"error","errorType":"internal","error":"boom"}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1700000000,"2"]]}]}}`,
		`<html><body>Sign in</body></html>`,
		``,
		`{"status":"success","data":{"resultType":"vector","result":[`,
		`{"data":{"result":[{"values":[[1.5,"2"]],"metric":{"x":"\u00e9\\"}}],"resultType":"matrix"},"status":"success"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a, err := decodeBody(body)
		if err == nil {
			if !json.Valid([]byte(body)) {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			for _, s := range a.series {
				if s.Labels == nil {
					t.Fatalf("nil labels in %+v", a.series)
				}
				for _, p := range s.Samples {
					if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
						t.Fatalf("non-finite sample %v accepted", p)
					}
				}
			}
		}
		ov, ot, oerr := oracleDecode(body)
		if err == nil && oerr == nil {
			if valueType(a) != ot || !reflect.DeepEqual(a.series, ov) {
				t.Fatalf("body %q\n new %q %+v\n  v1 %q %+v", body, a.resultType, a.series, ot, ov)
			}
		}
		// client_golang is lax where the decoder is strict (keys in any
		// case, no status): the two must agree on every body that keeps the
		// contract, and the decoder must refuse every body that does not.
		keeps := promContract(body)
		if err == nil && !keeps {
			t.Fatalf("accepted %q, which is not an answer as Prometheus writes it", body)
		}
		if oerr == nil && keeps && err != nil {
			t.Fatalf("refused %q (%v), an answer as Prometheus writes it that v1 decodes", body, err)
		}
		if !json.Valid([]byte(body)) {
			if err == nil || oerr == nil || err.Error() != oerr.Error() {
				t.Fatalf("invalid JSON %q: new %v, v1 %v", body, err, oerr)
			}
		}
	})
}

// promContract is the decoder's contract checked independently of it, with
// encoding/json's map decoding (which keeps keys exactly as written): a
// "status" of "success" (with a "data" object) or "error", and no key that
// matches a known key of its place only case-insensitively.
func promContract(body string) bool {
	misspelt := func(m map[string]json.RawMessage, known ...string) bool {
		for k := range m {
			for _, want := range known {
				if k != want && strings.EqualFold(k, want) {
					return true
				}
			}
		}
		return false
	}
	var env map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &env) != nil || misspelt(env, "status", "errorType", "error", "warnings", "data") {
		return false
	}
	var status string
	if json.Unmarshal(env["status"], &status) != nil {
		return false
	}
	switch status {
	case "error":
		return true
	case "success":
	default:
		return false
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(env["data"], &data) != nil || data == nil || misspelt(data, "resultType", "result") {
		return false
	}
	var typ string
	_ = json.Unmarshal(data["resultType"], &typ)
	known := map[string][]string{"vector": {"metric", "value", "histogram"}, "matrix": {"metric", "values", "histograms"}}[typ]
	if known == nil {
		return true
	}
	var result []map[string]json.RawMessage
	if json.Unmarshal(data["result"], &result) != nil {
		return true // not a series array: the shape errors are v1's to agree on
	}
	for _, s := range result {
		if misspelt(s, known...) {
			return false
		}
		switch typ {
		case "vector":
			if isNull(s["value"]) && isNull(s["histogram"]) {
				return false // a sample without its value
			}
			if !isNull(s["value"]) && !isPair(s["value"]) {
				return false
			}
		case "matrix":
			var pairs []json.RawMessage
			if !isNull(s["values"]) && json.Unmarshal(s["values"], &pairs) == nil {
				for _, p := range pairs {
					if !isPair(p) {
						return false
					}
				}
			}
		}
	}
	return true
}

// isPair is a sample as Prometheus writes it: [<number>, "<string>"].
func isPair(raw json.RawMessage) bool {
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		return false
	}
	var t float64
	var v string
	ts := bytes.TrimSpace(pair[0])
	return len(ts) > 0 && ts[0] != '"' && json.Unmarshal(ts, &t) == nil && json.Unmarshal(pair[1], &v) == nil
}

// isNull is true for an absent or null JSON value.
func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

type bodyTransport string

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}, nil
}

func oracleUnmarshal(body string) (model.Value, error) {
	ac, err := api.NewClient(api.Config{Address: "http://oracle.invalid", Client: &http.Client{Transport: bodyTransport(body)}})
	if err != nil {
		return nil, err
	}
	v, _, _, err := v1.NewAPI(ac).Query(context.Background(), "q", time.Unix(1, 0))
	return v, err
}

// oracleDecode is an independent decoder: client_golang's v1.API decoding,
// converted to Series (vector, scalar and matrix results).
func oracleDecode(body string) ([]Series, string, error) {
	v, err := oracleUnmarshal(body)
	if err != nil {
		return nil, "", err
	}
	labels := func(m model.Metric) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[string(k)] = string(v)
		}
		return out
	}
	switch v := v.(type) {
	case model.Vector:
		out := make([]Series, len(v))
		for i, s := range v {
			out[i].Labels = labels(s.Metric)
			if s.Histogram == nil && finite(float64(s.Value)) {
				out[i].Samples = []Sample{{T: s.Timestamp.Unix(), V: float64(s.Value)}}
			}
		}
		return out, "vector", nil
	case *model.Scalar:
		out := []Series{{Labels: map[string]string{}}}
		if finite(float64(v.Value)) {
			out[0].Samples = []Sample{{T: v.Timestamp.Unix(), V: float64(v.Value)}}
		}
		return out, "scalar", nil
	case model.Matrix:
		out := make([]Series, len(v))
		for i, ss := range v {
			out[i].Labels = labels(ss.Metric)
			for _, p := range ss.Values {
				if f := float64(p.Value); finite(f) {
					out[i].Samples = append(out[i].Samples, Sample{T: p.Timestamp.Unix(), V: f})
				}
			}
		}
		return out, "matrix", nil
	}
	return nil, "none", nil
}

// The request side kept v1's behaviour: a form POST, then GET when the
// server (or a proxy) refuses POST; non-2xx answers give v1's errors.
func TestDoLikeV1(t *testing.T) {
	const ok = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[7,"1"]}]}}`
	rows := []struct {
		name        string
		post        int // status answered to POST (200 answers ok)
		postBody    string
		wantMethods string
		wantErr     string
	}{
		{name: "POST answered", post: 200, postBody: ok, wantMethods: "POST"},
		{name: "405 falls back to GET", post: 405, wantMethods: "POST GET"},
		{name: "403 falls back to GET", post: 403, wantMethods: "POST GET"},
		{name: "501 falls back to GET", post: 501, wantMethods: "POST GET"},
		{name: "422 with the API's error", post: 422, postBody: `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}`,
			wantMethods: "POST", wantErr: "execution: query processing would load too many samples"},
		{name: "400 without JSON", post: 400, postBody: `bad`, wantMethods: "POST", wantErr: "client_error: client error: 400"},
		{name: "422 claiming success", post: 422, postBody: ok, wantMethods: "POST", wantErr: "bad_response: inconsistent body for response code"},
		{name: "500", post: 500, postBody: `<html>oops</html>`, wantMethods: "POST", wantErr: "server_error: server error: 500"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var methods []string
			rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				methods = append(methods, req.Method)
				status, body := r.post, r.postBody
				if req.Method == http.MethodGet {
					if req.URL.Query().Get("query") != "q" || req.URL.Query().Get("time") != "7" {
						t.Errorf("GET query %q", req.URL.RawQuery)
					}
					status, body = 200, ok
				} else {
					if err := req.ParseForm(); err != nil || req.PostForm.Get("query") != "q" || req.PostForm.Get("time") != "7" || req.PostForm.Get("timeout") != "5s" {
						t.Errorf("POST form %v %v", req.PostForm, err)
					}
				}
				return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
			})
			c, err := New(Config{URL: "http://prom.invalid:9090", Retries: -1, HTTPClient: &http.Client{Transport: rt}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Instant(context.Background(), "q", 7)
			if m := strings.Join(methods, " "); m != r.wantMethods {
				t.Errorf("methods %q, want %q", m, r.wantMethods)
			}
			if r.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), r.wantErr) || strings.Contains(err.Error(), "oops") {
					t.Fatalf("err = %v, want %q", err, r.wantErr)
				}
				return
			}
			want := []Series{{Labels: map[string]string{"a": "b"}, Samples: []Sample{{7, 1}}}}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
