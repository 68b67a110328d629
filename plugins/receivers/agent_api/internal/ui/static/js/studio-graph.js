// @ts-check
// The assistant's graph drawn from `GET /assistants/{id}/graph`: nodes laid out top to bottom by
// dagre (served from node_modules like Preact), conditional edges dashed. While a run streams, the
// node that reported last is highlighted; when the thread waits, the nodes that run next are.

import { Graph, layout } from '@dagrejs/dagre';
import { html } from '@tracepipe/webui/html.js';

/** @typedef {import('./types.js').GraphDrawing} GraphDrawing */

const NODE_HEIGHT = 32;
const CHAR_WIDTH = 7.5;

/**
 * Positions of the nodes and the edges' polylines.
 * @param {GraphDrawing} drawing
 */
export function layoutGraph(drawing) {
  const graph = new Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 36, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of drawing.nodes) {
    graph.setNode(node.id, {
      label: node.id,
      width: Math.max(72, node.id.length * CHAR_WIDTH + 24),
      height: NODE_HEIGHT,
    });
  }
  drawing.edges.forEach((edge, index) => {
    if (graph.hasNode(edge.source) && graph.hasNode(edge.target))
      graph.setEdge(edge.source, edge.target, { conditional: Boolean(edge.conditional) }, String(index));
  });
  layout(graph);
  const label = graph.graph();
  return {
    width: Math.ceil(label.width ?? 0),
    height: Math.ceil(label.height ?? 0),
    nodes: graph.nodes().map((id) => {
      const node = graph.node(id);
      return { id, x: node.x, y: node.y, width: node.width, height: node.height };
    }),
    edges: graph.edges().map((e) => {
      const edge = graph.edge(e);
      return {
        key: `${e.v}->${e.w}:${e.name}`,
        source: e.v,
        target: e.w,
        conditional: Boolean(/** @type {{ conditional?: boolean }} */ (edge).conditional),
        points: /** @type {{ x: number, y: number }[]} */ (edge.points ?? []),
      };
    }),
  };
}

/**
 * @param {{ drawing: GraphDrawing | null, active: string | undefined, next: string[] }} props
 */
export function GraphView({ drawing, active, next }) {
  if (!drawing) return html`<p class="muted">Reading the graph…</p>`;
  if (drawing.nodes.length === 0) return html`<p class="muted">The graph has no nodes.</p>`;
  const laid = layoutGraph(drawing);
  const description = `Graph with nodes ${drawing.nodes.map((n) => n.id).join(', ')}; edges ${drawing.edges
    .map((e) => `${e.source} to ${e.target}${e.conditional ? ' (conditional)' : ''}`)
    .join(', ')}.`;
  return html`
    <figure class="graph-view">
      <svg viewBox=${`0 0 ${laid.width} ${laid.height}`} width=${laid.width} role="img" aria-label=${description}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="graph-arrow" />
          </marker>
        </defs>
        ${laid.edges.map(
          (edge) => html`<polyline key=${edge.key} class=${`graph-edge${edge.conditional ? ' conditional' : ''}`}
            points=${edge.points.map((p) => `${p.x},${p.y}`).join(' ')} marker-end="url(#arrow)" />`,
        )}
        ${laid.nodes.map((node) => {
          const special = node.id.startsWith('__');
          const state = node.id === active ? ' active' : next.includes(node.id) ? ' next' : '';
          return html`<g key=${node.id} class=${`graph-node${special ? ' special' : ''}${state}`} data-node=${node.id}>
            <rect x=${node.x - node.width / 2} y=${node.y - node.height / 2} width=${node.width} height=${node.height} rx=${special ? node.height / 2 : 6} />
            <text x=${node.x} y=${node.y} dominant-baseline="central" text-anchor="middle">${node.id}</text>
          </g>`;
        })}
      </svg>
      <figcaption class="muted small">Dashed: conditional edges.${active ? ` Running: ${active}.` : next.length ? ` Next: ${next.join(', ')}.` : ''}</figcaption>
    </figure>`;
}
