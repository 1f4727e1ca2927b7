# tests/deploy/tests.cmake - what deploy/ ships for operators: the Prometheus rules and the Grafana dashboard.
add_shell_test(deploy.promtool deploy/promtool.sh 30)
add_shell_test(deploy.prometheus deploy/prometheus.sh 120)
