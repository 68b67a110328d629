// The type-level half of static schema extraction: a module the TypeScript checker reads beside
// each graph file (virtually; it is never written to disk). It turns the type of a graph export —
// a compiled graph, a builder, a promise of either or a factory returning one — into the object
// types that the JSON Schema generator walks: the state update, the builder's input, output and
// config. Message fields are collapsed to `BaseMessage`, so that the schema carries one
// `BaseMessage` definition instead of every message class expanded; other fields are expanded three
// levels deep and `any` below that, which bounds the work on recursive types.

/** The helper declarations; `@langchain/*` resolve from the graph's own directory. */
export const REFLECT_HELPERS = `
import type { BaseMessage } from '@langchain/core/messages';
import type { StateDefinition, StateType, UpdateType } from '@langchain/langgraph';

type GraphValue<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type CompiledOf<T> = GraphValue<T> extends infer G ? (G extends { compile(...args: any[]): infer C } ? C : G) : never;
type IsAny<T> = 0 extends 1 & T ? true : false;
type Same<A, B> = (<V>() => V extends A ? 1 : 2) extends <V>() => V extends B ? 1 : 2 ? true : false;
type NoOverwrite<T> = Exclude<T, { __overwrite__: any }>;
type MessageOf<T> = T extends BaseMessage ? BaseMessage : never;
type MessagesOf<T> = T extends Array<infer E> ? (Same<MessageOf<E>, BaseMessage> extends true ? BaseMessage[] : never) : never;
type Field<T, Depth extends 0[]> = IsAny<T> extends true
  ? T
  : Same<MessagesOf<NoOverwrite<T>>, BaseMessage[]> extends true
    ? BaseMessage[]
    : Same<MessageOf<NoOverwrite<T>>, BaseMessage> extends true
      ? BaseMessage
      : Shape<NoOverwrite<T>, [0, ...Depth]>;
export type Shape<T, Depth extends 0[] = []> = Depth extends [0, 0, 0]
  ? any
  : T extends unknown
    ? { [K in keyof T]: Field<T[K], Depth> }
    : never;
type NotAny<T> = IsAny<T> extends true ? never : T;

type GraphLike = { lg_is_pregel: boolean; invoke: (...args: any[]) => any; stream: (...args: any[]) => any };
type BuilderLike = { compiled: boolean; compile: (...args: any[]) => any };

/** \`true\` when T (or what it resolves to) is a compiled graph or a builder. */
export type IsGraph<T> = GraphValue<T> extends GraphLike ? true : GraphValue<T> extends BuilderLike ? true : false;
export type UpdateOf<T> = CompiledOf<T> extends { '~InputType': infer I } ? Shape<I> : never;
type BuilderOf<T> = CompiledOf<T> extends {
  builder: {
    _inputDefinition: infer I extends StateDefinition;
    _outputDefinition: infer O extends StateDefinition;
    _configSchema?: infer C extends StateDefinition | undefined;
  };
}
  ? { input: UpdateType<I>; output: StateType<O>; config: UpdateType<Exclude<C, undefined>> }
  : never;
export type InputOf<T> = Shape<NotAny<BuilderOf<T>['input']>>;
export type OutputOf<T> = Shape<NotAny<BuilderOf<T>['output']>>;
export type ConfigOf<T> = Shape<NotAny<BuilderOf<T>['config']>>;
`;
