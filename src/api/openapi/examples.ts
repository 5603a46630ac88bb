export interface ExampleAnswer {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
export const ANSWER_EXAMPLES: Readonly<Record<string, ExampleAnswer>> = {};
export const REFUSAL_EXAMPLES: Readonly<Record<string, ExampleAnswer>> = {};
export const ID_EXAMPLES = { partyId: '', marketId: '' };
