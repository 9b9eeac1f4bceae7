/**
 * Section 4.4 of the spec: appearance settings and stock-photo backgrounds (5 actions, scope data).
 * Declarations only; handlers are attached when the area is built.
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';

const AREA = '4.4 Appearance';

/** An appearance member of `appearance_put`: an object, or null. */
const SettingObject = (description?: string) =>
  Type.Optional(
    Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], description ? { description } : {}),
  );

const PhotoPath = Type.Object(
  { photo_id: Type.String({ minLength: 1, description: 'ID of the stock photo' }) },
  { additionalProperties: false },
);

const Family = Type.Union(
  [
    Type.Literal('paper'),
    Type.Literal('meridian'),
    Type.Literal('bloom'),
    Type.Literal('mono'),
    Type.Literal('solarized'),
    Type.Literal('catppuccin'),
    Type.Literal('rose-pine'),
    Type.Literal('ayu'),
    Type.Literal('github'),
    Type.Literal('one'),
    Type.Literal('tokyo-night'),
    Type.Literal('gruvbox'),
    Type.Literal('everforest'),
    Type.Literal('kanagawa'),
    Type.Literal('dracula'),
    Type.Literal('nord'),
  ],
  { description: 'Theme family whose background is set' },
);

export const actions = [
  defineAction({
    name: 'appearance_get',
    method: 'GET',
    route: '/api/v1/appearance',
    tool: 'svc_api_appearance_get',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Reads the caller's appearance settings: schemes, backgrounds and fonts.",
    input: {},
  }),
  defineAction({
    name: 'appearance_photos_search',
    method: 'GET',
    route: '/api/v1/appearance/photos/search',
    tool: 'svc_api_appearance_photos_search',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      'Searches the stock-photo source for background images. Request the next declared `page` until `pages` is reached.',
    input: {
      query: Type.Object(
        {
          page: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Result page' })),
          q: Type.String({ description: 'Search words' }),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'appearance_photos_select',
    method: 'POST',
    route: '/api/v1/appearance/photos/{photo_id}',
    tool: 'svc_api_appearance_photos_select',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Sets a stock photo as the background of one theme family in its light or dark scheme.',
    input: {
      path: PhotoPath,
      body: Type.Object(
        {
          family: Family,
          scheme: Type.Union([Type.Literal('light'), Type.Literal('dark')]),
        },
        { additionalProperties: false },
      ),
    },
  }),
  defineAction({
    name: 'appearance_photos_thumbnail',
    method: 'GET',
    route: '/api/v1/appearance/photos/images/{photo_id}',
    tool: 'svc_api_appearance_photos_thumbnail',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'base64',
    recentConfirmation: false,
    area: AREA,
    summary: 'Returns the thumbnail image of a stock photo as base64 bytes.',
    input: { path: PhotoPath },
  }),
  defineAction({
    name: 'appearance_put',
    method: 'PUT',
    route: '/api/v1/appearance',
    tool: 'svc_api_appearance_put',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['data'],
    effect: 'destructive',
    requestEncoding: 'json',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Saves the caller's appearance settings; every member is optional and each is an object or null (automatic scheme, background, background assignment, per-family backgrounds, fonts).",
    input: {
      body: Type.Object(
        {
          auto_scheme: SettingObject(),
          background: SettingObject(),
          background_assignment: SettingObject(),
          backgrounds: SettingObject('Per-family light and dark backgrounds'),
          fonts: SettingObject(),
          initialize_auto_scheme: SettingObject(),
        },
        { additionalProperties: false },
      ),
    },
  }),
];
