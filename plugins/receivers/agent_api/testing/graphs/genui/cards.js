// Generative UI components of a deployment (langgraph.json `ui`): a map of names to React
// components. React comes from the page that shows them, never from the bundle.
import { jsx } from 'react/jsx-runtime';
import './cards.css';

const WeatherCard = (props) => jsx('div', { className: 'weather-card', children: `Weather in ${props.city}` });

export default { 'weather-card': WeatherCard };
