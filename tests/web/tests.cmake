# tests/web/tests.cmake - the browser client: served files, and the chat in headless Chromium.
add_shell_test(web.static web/static.sh 60)
add_shell_test(web.chat web/chat.sh 120)
# --authz membership: `removed` shown in the page (notice, chat marked, writing disabled)
add_shell_test(web.members web/chat.sh 120 ARGS members.mjs)
