# SPDX-License-Identifier: MIT
#
# node-gyp build of the native half (src/twheel_node.cc) against
# node-addon-api and libtwheel. scripts/find-libtwheel.js says where
# libtwheel's headers and static library are (the source tree named by
# $TWHEEL_TREE, else pkg-config, else the system's directories);
# libtwheel.a is linked in, so the addon needs only glibc and libstdc++
# at run time.
{
  "targets": [
    {
      "target_name": "twheel",
      "sources": ["src/twheel_node.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(node scripts/find-libtwheel.js include)"
      ],
      "libraries": ["<!@(node scripts/find-libtwheel.js lib)"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror"],
      "ldflags": ["-Wl,--exclude-libs,ALL"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"]
    }
  ]
}
