package promfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string, error) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestScriptRecordsAndRepeatsLast(t *testing.T) {
	s := New(t, Script(HTML(502), OK("a"), OK("b")))
	var got []string
	for range 4 {
		code, body, err := get(t, s.URL+"/api/v1/query?query=up&time=5")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, http.StatusText(code)+":"+body[:1])
	}
	if want := "Bad Gateway:<,OK:a,OK:b,OK:b"; strings.Join(got, ",") != want {
		t.Errorf("replies %q, want %q", strings.Join(got, ","), want)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].N != 1 || reqs[3].N != 4 || reqs[0].Path != "/api/v1/query" || reqs[0].Form.Get("time") != "5" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestMaxInFlight(t *testing.T) {
	s := New(t, Always(Reply{Delay: 50 * time.Millisecond, Body: "{}"}))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, err := get(t, s.URL); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s.Count() != 4 || s.MaxInFlight() < 2 || s.MaxInFlight() > 4 {
		t.Errorf("count %d max in flight %d", s.Count(), s.MaxInFlight())
	}
}

func TestFaultReplies(t *testing.T) {
	body := Success("vector", Vector(Stream{Labels: map[string]string{"b": "2", "a": "1"}, Points: []Point{{T: 1.5, V: "NaN"}}}), "w1")
	var parsed map[string]any
	if err := json.Unmarshal([]byte(body), &parsed); err != nil {
		t.Fatalf("Success is not JSON: %v\n%s", err, body)
	}
	if want := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1","b":"2"},"value":[1.5,"NaN"]}]},"warnings":["w1"]}`; body != want {
		t.Errorf("body %s, want %s", body, want)
	}
	s := New(t, Script(Reply{Body: body, CutAfter: 10}, Reply{Reset: true}, TooManyRequests("3"), APIError("bad_data", "x")))
	if _, _, err := get(t, s.URL); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("cut transfer: %v", err)
	}
	if _, _, err := get(t, s.URL); err == nil {
		t.Error("reset: no error")
	}
	resp, err := http.Get(s.URL)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("429: %v %v", resp, err)
	}
	resp.Body.Close()
	if code, b, _ := get(t, s.URL); code != 400 || b != `{"status":"error","errorType":"bad_data","error":"x"}` {
		t.Errorf("api error: %d %s", code, b)
	}
	if _, _, err := get(t, ClosedURL(t)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("closed port: %v", err)
	}
}
