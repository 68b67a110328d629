// Human-readable documentation generated from a component's JSON Schema: the config table that
// `tracepipe components --type` prints and that plugin READMEs embed.

interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  minimum?: number;
  maximum?: number;
}

export interface ConfigRow {
  readonly key: string;
  readonly type: string;
  readonly default: string;
  readonly meaning: string;
}

function typeOf(node: SchemaNode): string {
  if (node.enum) return node.enum.map((value) => JSON.stringify(value)).join(' \\| ');
  const type = Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'any');
  if (type === 'array' && node.items) return `${typeOf(node.items)}[]`;
  const range = [
    node.minimum !== undefined ? `≥ ${node.minimum}` : '',
    node.maximum !== undefined ? `≤ ${node.maximum}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return range ? `${type} (${range})` : type;
}

/** One row per leaf key, nested objects flattened with dots. */
export function configRows(schema: SchemaNode, prefix = ''): ConfigRow[] {
  const rows: ConfigRow[] = [];
  for (const [key, node] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (node.properties && !node.enum) {
      rows.push(...configRows(node, path));
      continue;
    }
    const hasDefault = node.default !== undefined;
    rows.push({
      key: path,
      type: typeOf(node),
      default: hasDefault ? JSON.stringify(node.default) : '—',
      meaning: node.description ?? '',
    });
  }
  return rows;
}

/** The config table as Markdown. */
export function configTable(schema: Record<string, unknown>): string {
  const rows = configRows(schema as SchemaNode);
  if (rows.length === 0) return '_No settings._\n';
  const lines = ['| Key | Type | Default | Meaning |', '|---|---|---|---|'];
  for (const row of rows)
    lines.push(
      `| \`${row.key}\` | ${row.type} | ${row.default === '—' ? '—' : `\`${row.default}\``} | ${row.meaning} |`,
    );
  return lines.join('\n') + '\n';
}
