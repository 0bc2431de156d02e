package cli

import (
	"fmt"
	"strings"
)

// HeaderList is a repeatable --header 'Name: value' flag.
type HeaderList []string

func (h *HeaderList) String() string { return strings.Join(*h, ", ") }

// Type names the value in the flag list.
func (h *HeaderList) Type() string { return "header" }

// Repeatable marks the flag as taking one header per occurrence.
func (h *HeaderList) Repeatable() {}

// Set appends one header after checking its form.
func (h *HeaderList) Set(v string) error {
	name, _, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("header %q is not 'Name: value'", v)
	}
	*h = append(*h, v)
	return nil
}
