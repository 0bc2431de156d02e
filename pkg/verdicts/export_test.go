package verdicts

import "slices"

// KnownKeys is the registry of undotted gate keys, sorted (for the
// external test that compares it with a simulated run's rows).
func KnownKeys() []string {
	var ks []string
	for k := range knownKeys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
