// Opens agent.sqlite at argv[2] in its own process, starting at the wall-clock time argv[3] (so
// that several such processes open it at once), and prints what the migrations did as JSON. For
// the test that processes opening one file together migrate it once (storage.test.ts).

import { AGENT_MIGRATIONS } from '../internal/storage/sqlite.ts';
import { openSqliteFile } from '../internal/storage/sqlite-file.ts';

const startAt = Number(process.argv[3]);
while (Date.now() < startAt) await new Promise((resolve) => setTimeout(resolve, 1));
const file = openSqliteFile(process.argv[2]!, AGENT_MIGRATIONS);
file.close();
process.stdout.write(JSON.stringify(file.migrations));
