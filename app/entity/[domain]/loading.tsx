import { LoadingCard } from "@/components/loading-card";

export default LoadingCard;
