/** Sample Excalidraw elements and scenes for the canvas tests. */
import type { ExcalidrawElement, ExcalidrawScene } from '../../src/canvas/types.js';

let n = 0;
export function el(type: string, props: Record<string, unknown> = {}): ExcalidrawElement {
  n++;
  return {
    id: `el${String(n).padStart(6, '0')}`,
    type,
    x: 0,
    y: 0,
    width: 100,
    height: 60,
    angle: 0,
    strokeColor: '#1e1e1e',
    backgroundColor: 'transparent',
    fillStyle: 'solid',
    strokeWidth: 2,
    strokeStyle: 'solid',
    roughness: 1,
    opacity: 100,
    groupIds: [],
    frameId: null,
    roundness: null,
    seed: 1000 + n,
    version: 1,
    versionNonce: 500 + n,
    isDeleted: false,
    boundElements: null,
    updated: 1700000000000,
    link: null,
    locked: false,
    ...props,
  };
}

/** A scene with one element of each drawn type plus a deleted one; the same value on every call. */
export function sampleScene(): ExcalidrawScene {
  n = 0;
  return {
    type: 'excalidraw',
    version: 2,
    source: 'https://excalidraw.com',
    elements: [
      el('rectangle', { id: 'rect0001', x: 10, y: 20, width: 200, height: 120, backgroundColor: '#a5d8ff', fillStyle: 'hachure' }),
      el('ellipse', { id: 'elli0001', x: 260, y: 20, width: 140, height: 100, backgroundColor: '#ffc9c9', fillStyle: 'solid', opacity: 60 }),
      el('diamond', { id: 'diam0001', x: 440, y: 10, width: 120, height: 140, strokeColor: '#2f9e44', strokeStyle: 'dashed', roundness: { type: 2 } }),
      el('arrow', {
        id: 'arro0001',
        x: 210,
        y: 80,
        width: 50,
        height: 0,
        points: [
          [0, 0],
          [50, 0],
        ],
        startArrowhead: null,
        endArrowhead: 'arrow',
      }),
      el('arrow', {
        id: 'arro0002',
        x: 100,
        y: 180,
        width: 300,
        height: 80,
        roundness: { type: 2 },
        points: [
          [0, 0],
          [150, 80],
          [300, 0],
        ],
        startArrowhead: 'dot',
        endArrowhead: 'triangle',
        strokeColor: '#e03131',
      }),
      el('line', {
        id: 'line0001',
        x: 440,
        y: 200,
        width: 120,
        height: 60,
        points: [
          [0, 0],
          [120, 0],
          [60, 60],
          [0, 0],
        ],
        backgroundColor: '#ffec99',
        fillStyle: 'cross-hatch',
      }),
      el('freedraw', {
        id: 'free0001',
        x: 20,
        y: 300,
        width: 150,
        height: 40,
        points: [
          [0, 0],
          [20, 10],
          [50, 30],
          [90, 35],
          [150, 5],
        ],
        pressures: [],
        simulatePressure: true,
      }),
      el('text', {
        id: 'text0001',
        x: 30,
        y: 60,
        width: 160,
        height: 50,
        text: 'Hello <world> & "you"\nsecond line',
        originalText: 'Hello <world> & "you"\nsecond line',
        fontSize: 20,
        fontFamily: 1,
        textAlign: 'left',
        verticalAlign: 'top',
        containerId: null,
        lineHeight: 1.25,
      }),
      el('rectangle', { id: 'rota0001', x: 260, y: 300, width: 120, height: 40, angle: Math.PI / 6, backgroundColor: '#d0bfff' }),
      el('rectangle', { id: 'dele0001', x: 5000, y: 5000, isDeleted: true }),
    ],
    appState: { gridSize: null, viewBackgroundColor: '#fffce8' },
    files: {},
  };
}
