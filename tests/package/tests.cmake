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
# The packages of Debian 13 (trixie, PostgreSQL 17) and sid (PostgreSQL 18), built in a root of that release
# and installed with apt into a clean one (an overlay of scripts/container.sh's cached root), where the
# packaged extension relays to a real bullmq Worker; then the units of trixie's package under systemd as PID
# 1 of a trixie container (package.systemd.trixie, from the packages package.trixie built). Long: containers.
foreach(release trixie sid)
  add_shell_test(package.${release} package/on_release.sh 600 ARGS ${release})
  set_tests_properties(package.${release} PROPERTIES COST 150)
endforeach()
set_tests_properties(package.trixie PROPERTIES FIXTURES_SETUP packages_trixie)
add_shell_test(package.systemd.trixie package/systemd.sh 120 ARGS trixie)
set_tests_properties(package.systemd.trixie PROPERTIES FIXTURES_REQUIRED packages_trixie)
# extension.pg<major> writes into the cached root that package.<release> and package.systemd.trixie lay
# their overlays on (a lower layer must not change under a mounted overlay): never at the same time.
set_tests_properties(extension.pg17 package.trixie package.systemd.trixie PROPERTIES RESOURCE_LOCK root_trixie_pg17)
set_tests_properties(extension.pg18 package.sid PROPERTIES RESOURCE_LOCK root_sid_pg18)
