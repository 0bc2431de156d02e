package main

// The object-store drivers register the gs://, s3:// and azblob:// URL
// schemes with gocloud.dev/blob's default mux for pkg/runs.OpenStore;
// credentials come from the environment the way each cloud SDK finds them.
// Only the binaries' main packages import them (design.md), so a library
// importer (the demo, mage, tests) links no cloud SDK.
import (
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)
