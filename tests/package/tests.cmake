# tests/package/tests.cmake - the Debian packages, built by scripts/package.sh and installed with apt into a
# throwaway overlay of /usr, /etc and /var (the host's own files are never touched).
add_shell_test(package.install package/install.sh 900)
# Most of it is the package build: start it among the first when suites run side by side.
set_tests_properties(package.install PROPERTIES COST 150)
# The units under a real systemd (PID 1 of a systemd-nspawn container): sandboxing applied, Restart= after
# kill -9. It tests the package package.install built (the fixture), so the packages are built once a run.
add_shell_test(package.systemd package/systemd.sh 60)
set_tests_properties(package.install PROPERTIES FIXTURES_SETUP packages)
set_tests_properties(package.systemd PROPERTIES FIXTURES_REQUIRED packages)
