// Octokit's own pagination (@octokit/core with @octokit/plugin-paginate-rest) walking a list
// through `pare http`: `octokit.paginate` follows `Link: rel="next"` until there is none and
// concatenates the pages' arrays. Prints that array as JSON (tests/http_proxy.rs).
//
//   node octokit_walk.mjs NODE_MODULES BASE_URL ROUTE
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, baseUrl, route] = process.argv.slice(2);
const load = (pkg, file) => import(pathToFileURL(join(modules, pkg, file)).href);
const { Octokit } = await load("@octokit/core", "dist-src/index.js");
const { paginateRest } = await load("@octokit/plugin-paginate-rest", "dist-bundle/index.js");
const MyOctokit = Octokit.plugin(paginateRest);
const octokit = new MyOctokit({ baseUrl });
const all = await octokit.paginate(route);
process.stdout.write(JSON.stringify(all));
