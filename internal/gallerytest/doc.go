// Package gallerytest draws the plugin's editors in a real browser: it serves
// the editor gallery (src/gallery, built by `npm run build:gallery` into
// .gallery-dist/) on 127.0.0.1 and drives Debian's headless Chromium through
// every state of it, in the light and the dark theme. Per state it asserts
// what jsdom cannot: real layout (each labelled control drawn with a size,
// nothing overlapping the next field or section, nothing outside its editor),
// a console free of errors and React warnings, no secret value anywhere in
// the DOM, and Tab reaching every input in document order (walked in the
// light theme only: the order does not depend on the theme); and it writes a
// screenshot of the editor.
//
// The test runs only when GALLERY_DIR names the built gallery (`mage
// gallery` builds it and runs the test); plain `go test ./...` skips it.
// GALLERY_OUT sets where the screenshots go (default GALLERY_DIR/screenshots)
// and CHROMIUM the browser binary (default /usr/bin/chromium). With -update
// the few screenshots the plugin catalog shows are rewritten under src/img/.
package gallerytest
