#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The Java binding installed as a new user installs it, on a host without
# the module: `mvn install` of bindings/java into a local repository
# that starts empty (Maven Central fills it, as it fills a new user's
# ~/.m2), then a consumer project in a temporary directory, outside the
# tree, whose pom depends on org.twheel:twheel and netty-common from that
# repository, builds the README's "From Java" example (README=FILE: a
# draft) and runs it with nothing but its own class path. Without
# /dev/twheel the example must end as the README documents (the
# exception line below, which the README must also carry). One line to
# OUT and to stdout:
#   lang=java from=twheel-V.jar fresh=yes no_module=documented
# (no_module=wrong, exit status 1 otherwise).
#   install-check.sh OUT
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
readme=${README:-$top/README.md}
version=$(cat "$top/VERSION")
netty=$(sed -n 's|.*<netty.version>\(.*\)</netty.version>.*|\1|p' "$here/pom.xml")
documented='org.twheel.TwheelException: open /dev/twheel: ENOENT (No such file or directory)'

if [ -e /dev/twheel ]; then
	echo "install-check.sh: /dev/twheel exists; this checks the host without the module" >&2
	exit 1
fi
grep -qF "$documented" "$readme" || {
	echo "install-check.sh: $readme does not document '$documented'" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/twheel-java-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/m2
mvn="mvn -B -q -Dmaven.repo.local=$repo"

# The binding's own build, tests skipped: make check has just run them.
(cd "$here" && nice -n 10 $mvn install -DskipTests) >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log" >&2
	echo "install-check.sh: mvn install failed" >&2
	exit 1
}
jar=$repo/org/twheel/twheel/$version/twheel-$version.jar
test -f "$jar"

mkdir -p "$tmp/consumer/src/main/java"
"$here/readme-example.sh" --extract "$tmp/consumer/src/main/java/Offline.java"
cat >"$tmp/consumer/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>consumer</groupId>
  <artifactId>offline</artifactId>
  <version>1.0.0</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>17</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.twheel</groupId>
      <artifactId>twheel</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>io.netty</groupId>
      <artifactId>netty-common</artifactId>
      <version>$netty</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
    </plugins>
  </build>
</project>
EOF
(cd "$tmp/consumer" && nice -n 10 $mvn compile dependency:build-classpath -Dmdep.outputFile=cp.txt) \
	>"$tmp/consumer.log" 2>&1 || {
	cat "$tmp/consumer.log" >&2
	echo "install-check.sh: the consumer project did not build" >&2
	exit 1
}
cp=$tmp/consumer/target/classes:$(cat "$tmp/consumer/cp.txt")

# Fresh: the class path is the consumer's and the new repository's only.
fresh=yes
IFS=: read -ra entries <<<"$cp"
for e in "${entries[@]}"; do
	case $e in
	"$tmp"/*) ;;
	*) echo "install-check.sh: $e on the class path is outside $tmp" >&2; fresh=no ;;
	esac
done
case " ${entries[*]} " in
*" $jar "*) ;;
*) echo "install-check.sh: the class path has no $jar" >&2; fresh=no ;;
esac

set +e
(cd "$tmp" && env -u CLASSPATH timeout 120 java -cp "$cp" Offline) >"$tmp/run.out" 2>&1
rc=$?
set -e
sed 's/^/# example: /' "$tmp/run.out"
no_module=wrong
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "Exception in thread \"main\" $documented" "$tmp/run.out"; then
	no_module=documented
fi
line="lang=java from=twheel-$version.jar fresh=$fresh no_module=$no_module"
echo "$line" | tee "$out"
[ "$fresh" = yes ] && [ "$no_module" = documented ]
