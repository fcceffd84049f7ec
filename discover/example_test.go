package discover_test

import (
	"fmt"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// A plugin file's manifest and signature sit next to it.
func ExampleManifestPath() {
	fmt.Println(discover.ManifestPath("/opt/plugins/libblur.so"))
	fmt.Println(sign.SignaturePath("/opt/plugins/libblur.so"))
	// Output:
	// /opt/plugins/libblur.so.dynop.json
	// /opt/plugins/libblur.so.dynop.sig
}

// Directory scans pick up shared libraries and WebAssembly modules, not
// hidden files or the manifests and signatures next to them.
func ExampleIsPluginName() {
	for _, name := range []string{"libblur.so", "blur.wasm", "libblur.so.dynop.json", ".libold.so", "README"} {
		fmt.Println(name, discover.IsPluginName(name))
	}
	// Output:
	// libblur.so true
	// blur.wasm true
	// libblur.so.dynop.json false
	// .libold.so false
	// README false
}
