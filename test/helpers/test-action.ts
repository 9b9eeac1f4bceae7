/** An action declared by a test, for an app built around it alone: browser-only, no scopes, `test` area. */
import { defineAction, type ActionDef, type InputSchemas } from '../../src/actions/types.js';

type Given<S extends InputSchemas> = Pick<ActionDef<S>, 'name' | 'route' | 'input' | 'handler'> & Partial<Pick<ActionDef<S>, 'method' | 'effect'>>;

export function testAction<S extends InputSchemas>(given: Given<S>): ActionDef<S> {
  return defineAction({
    method: 'GET',
    effect: 'read',
    tool: `svc_${given.name}`,
    surfaces: [],
    scopes: ['none'],
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: 'test',
    summary: 'test',
    ...given,
  });
}
