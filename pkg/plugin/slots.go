package plugin

import (
	"context"
	"sync"
)

// querySlot is the slot of the instance's maxConcurrentQueries that one
// query holds while it computes. A query gives it back while it waits for a
// block (its own read, or another panel's read of the same block), so that
// panels waiting on one slow read never keep the dashboard's cheap panels
// waiting (measured at 24 h x 5,000 pods: packing waited 414 s behind the
// three pod-PSI panels sharing one read); the harvest itself takes a slot
// of its own. A query's handler may wait for several blocks at once from
// several goroutines (summary, frontier): the slot is given back by the
// first to wait and taken again by the last to stop waiting.
type querySlot struct {
	slots   chan struct{}
	mu      sync.Mutex
	held    bool
	waiting int
}

type querySlotKey struct{}

// takeSlot waits for a slot (or ctx) and returns ctx carrying it and the
// function that gives it back at the end of the query.
func takeSlot(ctx context.Context, slots chan struct{}) (context.Context, func(), error) {
	if _, err := takeHarvestSlot(ctx, slots); err != nil {
		return ctx, nil, err
	}
	s := &querySlot{slots: slots, held: true}
	return context.WithValue(ctx, querySlotKey{}, s), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.held {
			<-s.slots
			s.held = false
		}
	}, nil
}

// whileWaiting runs wait with the query's slot (if ctx carries one) given
// back, and takes the slot again before returning (unless ctx ends first:
// the query is then over and holds nothing).
func whileWaiting(ctx context.Context, wait func()) {
	s, _ := ctx.Value(querySlotKey{}).(*querySlot)
	if s == nil {
		wait()
		return
	}
	s.mu.Lock()
	s.waiting++
	if s.held {
		<-s.slots
		s.held = false
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.waiting--
		if s.waiting > 0 || s.held {
			return
		}
		select {
		case s.slots <- struct{}{}:
			s.held = true
		case <-ctx.Done():
		}
	}()
	wait()
}

// takeHarvestSlot waits for a slot (for one block harvest) and returns the
// function that gives it back.
func takeHarvestSlot(ctx context.Context, slots chan struct{}) (func(), error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
