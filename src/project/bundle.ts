// The portable form of a project: what the files in PROJECT_DIR hold, what export produces and
// import/plan/apply take. One list per kind of kinds/index.ts (`groups`, `endpoints`), plus
// records and settings. Identity is a natural key, never a database id:
//
// | kind     | key                                   | new file (kinds/)                      | JSON Schema                        |
// |----------|---------------------------------------|----------------------------------------|------------------------------------|
// | group    | name, case-insensitive (`groupKey`)   | groups/<slug of name>.yaml             | schemas/endpoint-group.schema.json |
// | endpoint | `METHOD path`, path normalized        | endpoints/<slug of path>-<method>.yaml | schemas/endpoint.schema.json       |
// | cronJob  | name, case-insensitive (`cronJobKey`) | cron/<slug of name>.yaml               | schemas/cron-job.schema.json       |
// | webhook  | name, case-insensitive (`webhookKey`) | webhooks/<slug of name>.yaml           | schemas/webhook.schema.json        |
//
// A file's name only matters when it is created: definitions are found by key, whatever file
// holds them (any `*.yaml`/`*.yml` in the kind's directory, one definition per file).
// The JSON Schemas define the fields; their `properties` order is the key order of written files.
//
// References are portable too: an endpoint's `group` is an endpoint group's name,
// `allowedGroups` are user group names, and a reference field's `ref` is a collection path.
// String values may be `${env:NAME}` or `${file:/path}` placeholders, resolved at apply time and
// kept as written on write-back and export (placeholders.ts).
export type { EndpointSpec, GroupSpec, HandlerSpec } from './specs.ts';

export type { Bundle } from './kinds/index.ts';
