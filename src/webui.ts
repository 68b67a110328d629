// `tracepipe/webui`: what a component that serves a browser interface shares with the agent
// server's studio and the trace explorer — the browser modules both interfaces import (vendor
// builds of preact and htm, and the shared modules, served under a prefix of the component's
// choosing), and the security headers of their pages (a Content-Security-Policy that allows
// same-origin code and the page's import map only, no framing, no sniffing, no referrer).
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export { contentSecurityPolicy, registerBrowserModules, securityHeaders } from './http/webui.ts';
