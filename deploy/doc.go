// Package deploy holds the deployment recipe of lcp's MCP server behind a
// load balancer (nginx.conf, kubernetes/) and the test that runs it: three
// replicas behind Debian's nginx, one drained and one killed under load.
// See README.md.
package deploy
