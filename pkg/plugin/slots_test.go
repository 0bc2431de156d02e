package plugin

import (
	"context"
	"testing"
	"time"
)

// TestQuerySlotGivenBackWhileWaiting: with one slot, a query waiting for a
// block lets another query compute; it takes the slot again when its wait
// ends; two waits of one query give it back once and take it once.
func TestQuerySlotGivenBackWhileWaiting(t *testing.T) {
	slots := make(chan struct{}, 1)
	ctx := context.Background()
	ctxA, releaseA, err := takeSlot(ctx, slots)
	if err != nil {
		t.Fatal(err)
	}
	tryTake := func() bool {
		c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, release, err := takeSlot(c, slots)
		if err != nil {
			return false
		}
		release()
		return true
	}
	if tryTake() {
		t.Fatal("a second query took the only slot while the first computed")
	}
	unblock, waited := make(chan struct{}), make(chan struct{})
	for range 2 { // two goroutines of one query wait at once
		go func() {
			whileWaiting(ctxA, func() { <-unblock })
			waited <- struct{}{}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if !tryTake() {
		t.Fatal("the slot was not given back while the query waited")
	}
	close(unblock)
	<-waited
	<-waited
	if tryTake() {
		t.Fatal("the query did not take its slot again after waiting")
	}
	releaseA()
	if !tryTake() {
		t.Fatal("the slot was not released at the end of the query")
	}
	if n := len(slots); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}
