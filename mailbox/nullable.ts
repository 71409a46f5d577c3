/** `T | null` as a schema: the mailbox's schemas say "absent" with null, never with a missing field (except where optional). */
import { Type } from "typebox";

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
