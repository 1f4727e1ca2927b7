# tests/package/tests.cmake - the Debian packages, built by scripts/package.sh and installed with apt into a
# throwaway overlay of /usr, /etc and /var (the host's own files are never touched).
add_shell_test(package.install package/install.sh 900)
# Most of it is the package build: start it among the first when suites run side by side.
set_tests_properties(package.install PROPERTIES COST 150)
