# SPDX-License-Identifier: MIT
#
# node-gyp build of the native half: the addon (src/twheel_node.cc, over
# node-addon-api) and libtwheel itself (deps/libtwheel/twheel.c, with its
# header and the uapi header beside it: scripts/vendor-libtwheel.js puts
# them there when the package is packed), so that installing the tarball
# needs no libtwheel on the system and the addon needs only glibc and
# libstdc++ at run time. libtwheel's symbols stay hidden in the addon.
{
  "targets": [
    {
      "target_name": "twheel",
      "sources": ["src/twheel_node.cc", "deps/libtwheel/twheel.c"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "deps/libtwheel",
        "deps/libtwheel/uapi"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags": ["-fvisibility=hidden"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"]
    }
  ]
}
