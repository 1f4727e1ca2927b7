# tests/repo/tests.cmake - the repository itself: what every file must hold to.
add_shell_test(repo.hygiene repo/hygiene.sh 30)
add_shell_test(repo.lua repo/lua.sh 30)
add_shell_test(repo.editorconfig repo/editorconfig.sh 10)
add_shell_test(repo.clang_format repo/clang_format.sh 60)
