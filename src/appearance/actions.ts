/**
 * Section 4.4 of the spec: appearance settings and stock-photo backgrounds.
 * Declarations only: the actions answer 501 until the area is built.
 */
import { Type } from '@sinclair/typebox';
import { Obj, OneOf, PathString, specAction } from '../actions/spec.js';

/** An appearance member of `appearance_put`: an object, or null. */
const SettingObject = (description?: string) =>
  Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], description ? { description } : {}));

const PhotoPath = Obj({ photo_id: PathString('ID of the stock photo') });

const FAMILIES = [
  'paper', 'meridian', 'bloom', 'mono', 'solarized', 'catppuccin', 'rose-pine', 'ayu',
  'github', 'one', 'tokyo-night', 'gruvbox', 'everforest', 'kanagawa', 'dracula', 'nord',
] as const;

export const actions = [
  specAction('appearance_get', {
    summary: "Reads the caller's appearance settings: schemes, backgrounds and fonts.",
  }),
  specAction('appearance_photos_search', {
    summary: 'Searches the stock-photo source for background images. Request the next declared `page` until `pages` is reached.',
    input: {
      query: Obj({
        page: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Result page' })),
        q: Type.String({ description: 'Search words' }),
      }),
    },
  }),
  specAction('appearance_photos_select', {
    summary: 'Sets a stock photo as the background of one theme family in its light or dark scheme.',
    input: {
      path: PhotoPath,
      body: Obj({ family: OneOf(FAMILIES, { description: 'Theme family whose background is set' }), scheme: OneOf(['light', 'dark']) }),
    },
  }),
  specAction('appearance_photos_thumbnail', {
    summary: 'Returns the thumbnail image of a stock photo as base64 bytes.',
    input: { path: PhotoPath },
  }),
  specAction('appearance_put', {
    summary: "Saves the caller's appearance settings; every member is optional and each is an object or null (automatic scheme, background, background assignment, per-family backgrounds, fonts).",
    input: {
      body: Obj({
        auto_scheme: SettingObject(),
        background: SettingObject(),
        background_assignment: SettingObject(),
        backgrounds: SettingObject('Per-family light and dark backgrounds'),
        fonts: SettingObject(),
        initialize_auto_scheme: SettingObject(),
      }),
    },
  }),
];
