#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The file repository that example/ and other consumers build against
# (make install): the artifacts `mvn install` put into the local
# repository, copied in a remote repository's layout, each with its
# .sha1 and .md5, and the artifact's maven-metadata.xml. What `mvn
# deploy` to a file:// URL writes, without the deploy plugin, which
# refuses to run offline (MVNFLAGS=-o).
#
#   file-repo.sh LOCAL_REPO FILE_REPO VERSION
set -eu

[ $# = 3 ] || { echo "usage: $0 LOCAL_REPO FILE_REPO VERSION" >&2; exit 2; }
local=$1/org/twheel/twheel
repo=$2/org/twheel/twheel
version=$3

[ -f "$local/$version/twheel-$version.jar" ] ||
	{ echo "file-repo.sh: no twheel-$version.jar in $local/$version (mvn install first)" >&2; exit 1; }
rm -rf "$repo"
mkdir -p "$repo/$version"
sums() {
	sha1sum "$1" | cut -d' ' -f1 | tr -d '\n' >"$1.sha1"
	md5sum "$1" | cut -d' ' -f1 | tr -d '\n' >"$1.md5"
}
for f in "$local/$version"/twheel-"$version"*.jar "$local/$version/twheel-$version.pom"; do
	cp "$f" "$repo/$version/"
	sums "$repo/$version/$(basename "$f")"
done
cat >"$repo/maven-metadata.xml" <<EOM
<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>org.twheel</groupId>
  <artifactId>twheel</artifactId>
  <versioning>
    <release>$version</release>
    <versions>
      <version>$version</version>
    </versions>
    <lastUpdated>$(date -u +%Y%m%d%H%M%S)</lastUpdated>
  </versioning>
</metadata>
EOM
sums "$repo/maven-metadata.xml"
