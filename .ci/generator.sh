# Sourced by .ci/setup and .ci/hardening: mneme_generator DIR prints the CMake generator
# option for the build directory DIR: "-G Ninja" for a new directory when ninja is
# installed, nothing for a directory already configured (CMake refuses to change the
# generator of an existing one) or without ninja (make).
mneme_generator() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    echo "-G Ninja"
  fi
}
