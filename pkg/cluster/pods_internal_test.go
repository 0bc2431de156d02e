package cluster

import "testing"

func TestMaxActors(t *testing.T) {
	tests := []struct {
		args    []string
		want    int64
		wantErr bool
	}{
		{nil, 1000, false},
		{[]string{"--max-actors=50"}, 50, false},
		{[]string{"--max-actors", "1"}, 1, false},
		{[]string{"--max-actors=050"}, 50, false},
		{[]string{"--max-actors=0"}, 0, false},
		{[]string{"--max-actors=7", "--max-actors=9"}, 7, false},    // first wins
		{[]string{"--max-actors", "7", "--max-actors=9"}, 7, false}, // first wins across forms
		{[]string{"--max-actorsx=5", "-max-actors=5"}, 1000, false}, // other flags
		{[]string{"--max-actors=lots"}, 0, true},
		{[]string{"--max-actors="}, 0, true},
		{[]string{"--max-actors=-3"}, 0, true},
		{[]string{"--max-actors=2.5"}, 0, true},
		{[]string{"--max-actors"}, 0, true},
		{[]string{"--max-actors", "--verbose"}, 0, true},
	}
	for _, tt := range tests {
		got, err := maxActors(tt.args)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("maxActors(%q) = %d, %v; want %d, err %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
}
